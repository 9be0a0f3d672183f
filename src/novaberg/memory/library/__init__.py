"""The library: the files a person allowed the character to read, indexed by passage and
searchable by words and vector (docs/behaviour/library.md)."""
