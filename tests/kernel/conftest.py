import os
import tempfile

# The kernel processes inherit this: history and config from other sessions stay out.
os.environ.setdefault("IPYTHONDIR", tempfile.mkdtemp(prefix="ipython-"))
# A notebook shows a JSON stdout as a tree only when the cell ends within the hold time (half a
# second by default); a loaded machine must not turn that into text, so the tests' kernels wait.
os.environ.setdefault("SCRIPTED_JSON_HOLD_SECONDS", "600")
