# The package re-exports the compiled extension (mancala_tb.mancala_tb),
# which __init__.pyi describes; mancala_tb.openspiel, pure Python, sits
# beside it.
from .mancala_tb import *  # noqa: F401,F403
from .mancala_tb import __all__, __doc__  # noqa: F401
