"""Claims of K-Vib ([003]): unbiased client sampling, optimal ISP, regret in the budget K."""
