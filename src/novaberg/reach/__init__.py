"""Reach: Nova's outcomes on the person's other channels (Telegram, Web Push; the seam is
`channels.Channel`), and Telegram as a way in (docs/behaviour/reach.md)."""
