"""Theorem checks, one module (or sub-package) per paper; every module registers its claims.

This package is a claim plugin (entry point ``verify`` of the group ``flbounds.claims`` in
``pyproject.toml``): :func:`flbounds.ledger.load_all` imports it and every module below it.
It declares the five papers here, so their claims (and those of ``paper_checks``) can
register.
"""

from flbounds.ledger import paper

paper("safari", source="000_e0ee0ed9d3888010",
      title="Understanding Server-Assisted Federated Learning in the Presence of Incomplete "
            "Client Participation",
      reference="H. Yang, P. Qiu, P. Khanduri, M. Fang, J. Liu (SAFARI)")
paper("fedals", source="001_62dd516e80e93f02",
      title="Improved Generalization Bounds for Communication Efficient Federated Learning",
      reference="P. Gholami, H. Seferoglu (FedALS)")
paper("focus", source="002_d5aeef3645e253f4",
      title="Exact and Linear Convergence for Federated Learning under Arbitrary Client "
            "Participation is Attainable",
      reference="B. Ying, Z. Li, H. Yang (FOCUS)")
paper("kvib", source="003_5c85167508cfaee9",
      title="Enhanced Federated Optimization: Adaptive Unbiased Client Sampling with Reduced "
            "Variance",
      reference="D. Zeng, Z. Xu, Y. Pan, X. Luo, Q. Wang, X. Tang (K-Vib)")
paper("subtrunc", source="004_e668539e51e13de2",
      title="Submodular Maximization Approaches for Equitable Client Selection in Federated "
            "Learning",
      reference="A. C. Castillo J., E. C. Kaya, L. Ye, A. Hashemi (SubTrunc, UnionFL)")
