"""Stage 3: the rules. The compiler and the sandbox compiled rules run in, rule packs and their disk cache, the review of one
manifest (tier, evaluation, waivers), rule cases as data, the base diff's change set, and
bulk review in worker processes. Imports the manifest and physics stages only."""
