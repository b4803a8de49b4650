"""Drop-in modules for programs written against other packages' APIs (see `bashkit`)."""
