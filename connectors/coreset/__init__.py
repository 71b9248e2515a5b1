"""What HT-Coreset reads: target tables (``targets``), prediction files (``predictions``), saved designs (``designs``)."""
