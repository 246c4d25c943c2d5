"""Stage 5: people. The checklist a lead, facilities and finance tick, sign-off records
spliced into the manifest, and `verify`. May use reporters' templates; never the CLI."""
