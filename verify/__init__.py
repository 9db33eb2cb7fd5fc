"""Theorem checks, one module (or sub-package) per paper; every module registers its claims.

This package is a claim plugin (entry point ``verify`` of the group ``flbounds.claims`` in
``pyproject.toml``): :func:`flbounds.ledger.load_all` imports it and every module below it.
It declares the five papers here, so their claims (and those of ``paper_checks``) can
register.
"""

from flbounds.ledger import paper

paper("safari", source="arXiv:2405.02745", venue="ICML 2024",
      title="Understanding Server-Assisted Federated Learning in the Presence of Incomplete "
            "Client Participation",
      reference="Haibo Yang, Peiwen Qiu, Prashant Khanduri, Minghong Fang, Jia Liu")
paper("fedals", source="arXiv:2404.11754", venue="2024",
      title="Improved Generalization Bounds for Communication Efficient Federated Learning",
      reference="Peyman Gholami, Hulya Seferoglu")
paper("focus", source="arXiv:2503.20117", venue="NeurIPS 2025",
      title="Exact and Linear Convergence for Federated Learning under Arbitrary Client "
            "Participation is Attainable",
      reference="Bicheng Ying, Zhe Li, Haibo Yang")
paper("kvib", source="arXiv:2310.02698", venue="TMLR 2025",
      title="Enhanced Federated Optimization: Adaptive Unbiased Client Sampling with Reduced "
            "Variance",
      reference="Dun Zeng, Zenglin Xu, Yu Pan, Xu Luo, Qifan Wang, Xiaoying Tang")
paper("subtrunc", source="arXiv:2408.13683", venue="2024; parts at CDC 2024",
      title="Submodular Maximization Approaches for Equitable Client Selection in Federated "
            "Learning",
      reference="Andrés C. Castillo J., Ege C. Kaya, Lintao Ye, Abolfazl Hashemi")
