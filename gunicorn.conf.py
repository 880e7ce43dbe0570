"""gunicorn's settings that belong with the code (gunicorn reads ./gunicorn.conf.py from the
folder it starts in; docs/deploy.md's unit gives the rest on its command line).

nginx in front refuses a request line or header field longer than one of its
large_client_header_buffers (4 KiB, docs/deploy.md) with the site's own 414 page; gunicorn
takes up to its maximum (8,190 bytes), so that whatever nginx passes on, gunicorn answers, and
its bare "URI Too Long" page is never what a person sees."""

limit_request_line = 8190
limit_request_field_size = 8190
