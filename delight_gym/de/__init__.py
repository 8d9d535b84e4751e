"""Delight-gated exploration itself: the rule, its options, statistics, hosts, candidate sets
and the engines (:class:`~delight_gym.de.wrapper.DelightExplorationWrapper`).

The posterior protocol the engines speak (:class:`~delight_gym.de.posterior.ValuePosterior`)
lives here too, so that DE never imports a posterior: the posteriors import it.
"""
