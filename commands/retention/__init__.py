"""`python -m commands.retention --keep N [--delete]`: a local pipeline's retention (store/retention/)."""
