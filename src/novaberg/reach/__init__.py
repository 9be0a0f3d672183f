"""Reach: Nova's outcomes on the person's other channels (Telegram now; Web Push has its
seam in `channels.Channel`), and Telegram as a way in (docs/behaviour/reach.md)."""
