"""The random variant sampler (Jagged Frontier, Algorithm 1) and the keywords it draws with."""
