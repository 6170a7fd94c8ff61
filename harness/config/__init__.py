"""L1 what the user configured: environment and settings, the project root, agents.yml and
llms.yml (the entrants), budgets."""
