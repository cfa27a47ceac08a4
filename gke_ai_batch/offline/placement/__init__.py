"""Where `make admit`'s admitted work goes: fleet dispatch, a compute class's ways, a queue's usage order."""
