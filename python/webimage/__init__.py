"""swift-web-image's `webimage` command, from Python.

`download()` takes img2dataset's `download` arguments and runs the `webimage prefetch` command
this package carries (on local processes, Spark or Ray); the `webimage` console entry is the
command itself. docs/crawling.md in the project says what each argument does here.
"""

from ._command import CommandError, UsageError, command_path
from ._download import download
from ._version import __version__

__all__ = ["download", "command_path", "CommandError", "UsageError", "__version__"]
