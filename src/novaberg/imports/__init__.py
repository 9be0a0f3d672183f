"""Bringing history from elsewhere: chat exports into the archive, character cards into
characters. Above the graphs (distilling runs the salience node), below the CLI and API."""
