"""Files and object stores as every connector reads them: fsspec paths and fingerprints, UTF-8 checks,
record-aligned CSV/TSV pieces, expected row counts, YAML input lists, and the read report (rows in,
skipped by reason, unread ranges) that makes a short read visible."""
