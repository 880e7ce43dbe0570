"""JSON bodies of the API read up to a bound: DRF's JSONParser reads the request's stream
whole, past Django's DATA_UPLOAD_MAX_MEMORY_SIZE (which only `request.body` checks)."""

from __future__ import annotations

import io
from typing import Any

from django.conf import settings
from rest_framework.parsers import JSONParser


class BoundedJsonParser(JSONParser):
    """A JSON body of at most API_MAX_BODY_BYTES; a larger one is a 413, read no further."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        # Here, not at the top: rest_framework.views, which trees.api.errors imports, reads
        # DEFAULT_PARSER_CLASSES, this class, as it is imported.
        from trees.api.errors import TooLarge

        limit = settings.API_MAX_BODY_BYTES
        body = b"" if stream is None else stream.read(limit + 1)
        if len(body) > limit:
            raise TooLarge(f"the body is over {limit:,} bytes (API_MAX_BODY_BYTES)")
        return super().parse(io.BytesIO(body), media_type, parser_context)
