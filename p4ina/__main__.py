import sys

from p4ina.cli import main

sys.exit(main())
