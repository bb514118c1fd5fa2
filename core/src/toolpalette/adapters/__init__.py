"""Adapters between toolpalette and the agent frameworks hosts already use.

Each lives in its own module, imported only when used, and needs its framework
installed (an optional extra of ``toolpalette``):

- [`toolpalette.adapters.langchain`][toolpalette.adapters.langchain]
(``toolpalette[langchain]``): a bound thinker's
  palette as LangChain tools, and LangChain tools as toolpalette providers.
- [`toolpalette.adapters.pydantic_ai`][toolpalette.adapters.pydantic_ai]
(``toolpalette[pydantic-ai]``): a bound
  thinker as a pydantic-ai toolset, and a pydantic-ai function toolset as providers.

In both directions a call made through the framework goes through toolpalette's
pipeline (name, read-only binding, input validation, policy, timeout, output cap, error
shaping), and a failure reaches the model as its readable text, never as a crash.
"""
