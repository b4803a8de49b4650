import os
import tempfile

# The kernel processes inherit this: history and config from other sessions stay out.
os.environ.setdefault("IPYTHONDIR", tempfile.mkdtemp(prefix="ipython-"))
