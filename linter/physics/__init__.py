"""Stage 2: the numbers. `formulas` holds every formula with its source; `facts` gathers a
resolved manifest's inputs and derives the quantities rules read. Never imports the engine,
a reporter or the command line."""
