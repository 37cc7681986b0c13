"""Cabinets: sessions persisted outside the goldfish loop (hydrate and flush)."""

from .base import Cabinet, LogEntry, SessionInfo

__all__ = ["Cabinet", "LogEntry", "SessionInfo"]
