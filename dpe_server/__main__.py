import sys

from dpe_server.cli.command import main

sys.exit(main())
