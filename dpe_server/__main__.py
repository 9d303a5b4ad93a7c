import sys

from dpe_server.cli import main

sys.exit(main())
