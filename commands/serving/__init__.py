"""`python -m commands.serving versions|rollback`: the serving dir's versions (serving/)."""
