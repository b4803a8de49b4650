"""IPython extension for scripted tools (`%load_ext scripted_magic`); the magics arrive with
the extension's own work item."""


def load_ipython_extension(ipython):  # pragma: no cover - filled in by the extension work
    raise ImportError("the %%scripted magic is not available in this version")
