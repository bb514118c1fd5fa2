"""Model providers' formats: tool schemas out, tool calls in, results back (uses ``_tools``)."""
