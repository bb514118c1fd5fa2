"""Finding deferred tools and skills: the default ranker, bundles, indexes, findability."""
