// Fixture for layers.detects_upward.
#pragma once
