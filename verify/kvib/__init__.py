"""Claims of K-Vib: unbiased client sampling, optimal ISP, regret in the budget K."""
