"""``arena serve``: the web site and the JSON API over the Python API (the top layer, beside
the command line). Starlette on uvicorn; needs the ``bot-arena[server]`` extra."""
