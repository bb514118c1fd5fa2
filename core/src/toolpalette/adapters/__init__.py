"""Adapters between toolpalette and the agent frameworks hosts already use.

Each needs its framework (an extra); either way a call goes through toolpalette's pipeline.
"""
