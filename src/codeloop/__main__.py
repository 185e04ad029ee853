import sys

from codeloop.cli.main import main

sys.exit(main())
