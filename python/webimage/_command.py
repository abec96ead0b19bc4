"""The `webimage` binary inside this package, run as a child process or in place of Python."""

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import List, Sequence

# The release binary, linked with the Swift runtime inside and its image libraries vendored
# beside the package (auditwheel sets its RPATH); its resources folder sits next to it, where
# the binary looks for them.
_BINARY = Path(__file__).resolve().parent / "bin" / "webimage"


def command_path() -> str:
    """The path of the `webimage` command this package carries."""
    return str(_BINARY)


def main() -> None:
    """The `webimage` console entry: becomes the binary, with the same arguments, exit status
    and terminal (a progress bar still sees a terminal)."""
    os.execv(_BINARY, [str(_BINARY)] + sys.argv[1:])


class CommandError(RuntimeError):
    """The command failed: `returncode` is its exit status (negative: killed by that signal),
    `message` what it said on stderr last (its error, not its progress)."""

    def __init__(self, arguments: Sequence[str], returncode: int, message: str):
        self.arguments = list(arguments)
        self.returncode = returncode
        self.message = message
        how = f"was killed by signal {-returncode}" if returncode < 0 else f"exited with status {returncode}"
        super().__init__(f"webimage {arguments[0] if arguments else ''} {how}" + (f": {message}" if message else ""))


class UsageError(CommandError, ValueError):
    """The command refused its arguments (exit status 2): a bad value, an unknown option."""


# How many of the command's last stderr lines an error keeps (its message and the warnings
# before it; a usage error is three lines).
_KEPT_LINES = 8


def run(arguments: Sequence[str], stdout=None, stderr=None) -> str:
    """Runs `webimage ARGUMENTS`, copying its stderr (progress, warnings) to `stderr` (default
    the caller's `sys.stderr`) as it comes, and returns its stdout. Raises ``UsageError`` for
    exit status 2 and ``CommandError`` for any other failure."""
    stderr = stderr or sys.stderr
    kept: List[str] = []
    with subprocess.Popen(
        [str(_BINARY), *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    ) as process:
        copier = threading.Thread(target=_copy_lines, args=(process.stderr, stderr, kept), daemon=True)
        copier.start()
        try:
            output = process.stdout.read().decode("utf-8", "replace")
            returncode = process.wait()
        except BaseException:
            # An interrupted caller (KeyboardInterrupt, a cancelled Spark task) takes the command down too.
            process.kill()
            raise
        finally:
            copier.join()
    if stdout is not None:
        stdout.write(output)
    if returncode != 0:
        error = UsageError if returncode == 2 else CommandError
        raise error(arguments, returncode, "\n".join(kept))
    return output


def _copy_lines(source, sink, kept: List[str]) -> None:
    for raw in iter(source.readline, b""):
        line = raw.decode("utf-8", "replace")
        sink.write(line)
        sink.flush()
        # Progress lines report, they do not explain a failure.
        if line.strip() and not line.startswith("progress: "):
            kept.append(line.rstrip("\n"))
            del kept[:-_KEPT_LINES]

