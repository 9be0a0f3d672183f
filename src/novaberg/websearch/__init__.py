"""Web search through a pluggable provider (docs/behaviour/nodes.md#web-search).

Used by the thinker's web tools and by background research; sits below the graphs and the
pixie jobs so both can import it. Without a configured provider there is no web search:
`provider_from_settings` returns None and the callers offer no web tools.
"""

from novaberg.websearch.provider import (
    SearchResult,
    SearxngProvider,
    WebSearchError,
    WebSearchProvider,
    provider_from_settings,
)

__all__ = [
    "SearchResult",
    "SearxngProvider",
    "WebSearchError",
    "WebSearchProvider",
    "provider_from_settings",
]
