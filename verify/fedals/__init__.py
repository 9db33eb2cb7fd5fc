"""Claims of FedALS ([001] Gholami & Seferoglu): generalization bounds and adaptive local steps."""
