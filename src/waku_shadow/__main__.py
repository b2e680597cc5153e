import sys

from waku_shadow.cli import main

sys.exit(main())
