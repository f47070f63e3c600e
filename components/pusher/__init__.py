"""The Pusher (pusher.py): it pushes a blessed model, or records why not."""

# The PushedModel's custom property that says why a blessed model was not
# pushed. Named here, not in pusher.py, so that its reader
# (store/metadata/outcome.py, for `python -m commands.debug runs`) need not
# import TFX with the executor.
REFUSED = "not_pushed_because"
