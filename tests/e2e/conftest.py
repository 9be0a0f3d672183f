"""Fixtures of the browser tests (defined in browser_kit.py, shared with the tests)."""

from browser_kit import browser, page, served, shoot

__all__ = ["browser", "page", "served", "shoot"]
