"""Stage 3: the rules. The Jinja2 sandbox, rule packs and their disk cache, the review of one
manifest (tier, evaluation, waivers), rule cases as data, the base diff's change set, and
bulk review in worker processes. Imports the manifest and physics stages only."""
