"""Python's ``logging`` into horus's log ring: the same path as Rust's log macros.

``logging.getLogger().addHandler(horus.HorusHandler())`` sends every record to this
process's shared-memory log segment (``/dev/shm/horus.<ns>.log.<pid>``), where ``horus
log`` reads it beside the Rust processes' records, and the process's drain thread prints
it on stderr (``HORUS_LOG_CONSOLE=0`` turns that off). Python formats the message (as it
always does); the record is then copied into the ring without blocking. At interpreter
exit the segment is removed; a process that crashes leaves it for ``horus log``.
"""

from __future__ import annotations

import atexit
import logging
from typing import Optional

from . import _horus

__all__ = ["HorusHandler", "log_segment_name"]

_registered = False


def _level(levelno: int) -> int:
    """horus level (0 trace … 4 error) of a ``logging`` level number."""
    if levelno < logging.DEBUG:
        return 0
    if levelno < logging.INFO:
        return 1
    if levelno < logging.WARNING:
        return 2
    if levelno < logging.ERROR:
        return 3
    return 4


class HorusHandler(logging.Handler):
    """A ``logging.Handler`` writing each record into horus's log ring."""

    def __init__(self, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        global _registered
        if not _registered:
            atexit.register(_horus.log_shutdown)
            _registered = True

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info:
                message += "\n" + logging.Formatter().formatException(record.exc_info)
            fields = [("thread", record.threadName or "")] if record.threadName != "MainThread" else []
            try:
                _horus.log_record(
                    _level(record.levelno), record.name, record.pathname, record.lineno, message, fields
                )
            except UnicodeEncodeError:
                # A str that is no valid UTF-8 (a lone surrogate, e.g. a file name
                # os.fsdecode made of undecodable bytes): written escaped, not lost.
                _horus.log_record(
                    _level(record.levelno),
                    _utf8(record.name),
                    _utf8(record.pathname),
                    record.lineno,
                    _utf8(message),
                    [(k, _utf8(v)) for k, v in fields],
                )
        except Exception:
            self.handleError(record)


def _utf8(s: str) -> str:
    """``s`` with what UTF-8 cannot encode (lone surrogates) backslash-escaped."""
    return s.encode("utf-8", "backslashreplace").decode("utf-8")


def log_segment_name() -> Optional[str]:
    """This process's log segment name, creating the logger if needed."""
    return _horus.log_segment_name()
