"""The ``arena`` command line."""

#: The distribution's version, read by the packaging (pyproject.toml) and by ``arena --version``
#: (reading it from the installed metadata would cost ``arena --version`` about 45 ms).
__version__ = "0.1.0"
