"""How objects reach the store: manifest files, and informers over the API server's list and
watch streams."""
