"""Per-record outputs: one Parquet file per shard, streamed, and visible only once complete."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from connectors.runs.output import WholeFile, naming_output


class ShardRecordWriter:
    """Stream record batches of one shard to ``url``; ``close`` moves the file into place.

    Written under a temporary name first, so a shard that fails half way leaves no records file
    that ``--resume`` or a reader could mistake for a finished one. Nothing is written for a shard
    with no records. A failed write (a full disk) is raised naming ``url``.
    """

    def __init__(self, url: str, schema: pa.Schema):
        self.url = url
        self.file = WholeFile(url)
        self.schema = schema
        self._writer: pq.ParquetWriter | None = None

    def write(self, table: pa.Table | None) -> None:
        if table is None or table.num_rows == 0:
            return
        with naming_output(self.url):
            self._open().write_table(table)

    def write_empty(self) -> None:
        """Make the file exist with no rows (a small table whose columns a reader still needs)."""
        with naming_output(self.url):
            self._open()

    def _open(self) -> pq.ParquetWriter:
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.file.open(), self.schema, compression="zstd")
        return self._writer

    def close(self) -> None:
        if self._writer is not None:
            with naming_output(self.url):
                self._writer.close()
            self.file.commit()

    def abort(self) -> None:
        """Drop the temporary; a close that fails again (the disk is still full) must not hide the
        error that made the shard abort."""
        if self._writer is not None:
            try:
                self._writer.close()
            except OSError:
                pass
        self.file.discard()
