"""Client samplers driven by feedback: uniform, oracle, K-Vib, Vrb, Mabs, Avare ([003])."""

from .bandits import Avare, Mabs, Vrb
from .base import Draw, Feedback, isp_draw, multinomial_draw
from .kvib import KVib, kvib_theta
from .simple import OracleISP, UniformISP, UniformRSP

__all__ = ["Avare", "Draw", "Feedback", "KVib", "Mabs", "OracleISP", "UniformISP", "UniformRSP",
           "Vrb", "isp_draw", "kvib_theta", "multinomial_draw"]
