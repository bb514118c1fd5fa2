"""What a tool is: ``@tool``, providers, the record, results, the registry (uses ``_schema``)."""
