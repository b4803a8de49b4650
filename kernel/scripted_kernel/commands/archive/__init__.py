"""Archives and compression: tar, gzip/bzip2/xz (with their un- and cat- forms), zip, unzip.

All of it runs in memory over the filesystem layer, never a host path: tarfile reads over
`codecs.ForwardFile`, zipfile writes and `zipread` reads zip archives. `codecs` expands and
compresses data in bounded chunks; `members` is the one guard that keeps every extracted member
inside its target directory.
"""
from . import compress  # noqa: F401  (registers gzip, bzip2, xz and their aliases)
from . import tar  # noqa: F401
from . import zip  # noqa: F401
