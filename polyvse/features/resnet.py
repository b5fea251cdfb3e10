"""ResNet-152 in plain torch, parameter names compatible with torchvision.

SMALR §4 "Visual Features" (and MULE, which shares its setup) describe images by
ResNet-152 ImageNet features. torchvision cannot be imported here, so the
architecture is written out; parameter and buffer names follow torchvision's
``resnet152`` (``conv1``, ``bn1``, ``layer1.0.conv1``, ``layer1.0.downsample.0``,
…, ``fc``) so that a torchvision ``resnet152-*.pth`` state dict loads with
``strict=True``. Bottleneck blocks put the stride on the 3×3 convolution
("ResNet v1.5"), as torchvision does.
"""

from __future__ import annotations

import torch
from torch import nn

RESNET152_LAYERS = (3, 8, 36, 3)
"""Bottleneck blocks per stage of ResNet-152 (He et al. 2016, Table 1)."""

BOTTLENECK_EXPANSION = 4


def _conv3x3(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


def _conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class Bottleneck(nn.Module):
    """1×1 reduce → 3×3 (strided) → 1×1 expand, plus the identity or a projection shortcut."""

    def __init__(self, in_planes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        out_planes = planes * BOTTLENECK_EXPANSION
        self.conv1 = _conv1x1(in_planes, planes)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = _conv3x3(planes, planes, stride)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = _conv1x1(planes, out_planes)
        self.bn3 = nn.BatchNorm2d(out_planes)
        self.relu = nn.ReLU(inplace=True)
        # The shortcut needs a projection whenever the shape changes.
        self.downsample: nn.Module | None = None
        if stride != 1 or in_planes != out_planes:
            self.downsample = nn.Sequential(_conv1x1(in_planes, out_planes, stride), nn.BatchNorm2d(out_planes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """Bottleneck ResNet; ``ResNet()`` is ResNet-152.

    ``forward`` returns ImageNet logits ``(B, num_classes)``; ``feature_map``
    the last convolutional map ``(B, 2048, H/32, W/32)``; ``pooled`` its global
    average ``(B, 2048)`` — the vector before ``fc`` used as image features.
    """

    def __init__(self, layers: tuple[int, int, int, int] = RESNET152_LAYERS, num_classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        in_planes = 64
        stages = []
        for i, (planes, blocks) in enumerate(zip((64, 128, 256, 512), layers)):
            stride = 1 if i == 0 else 2
            stage = [Bottleneck(in_planes, planes, stride)]
            in_planes = planes * BOTTLENECK_EXPANSION
            stage += [Bottleneck(in_planes, planes) for _ in range(blocks - 1)]
            stages.append(nn.Sequential(*stage))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(in_planes, num_classes)
        self.out_dim = in_planes
        self._init_weights()

    def _init_weights(self) -> None:
        # He initialisation as torchvision's; it only matters when no weights are loaded (tests).
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def feature_map(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, 3, H, W)`` normalised images → ``(B, 2048, ⌈H/32⌉, ⌈W/32⌉)``."""
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        return self.layer4(self.layer3(self.layer2(self.layer1(x))))

    def pooled(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, 3, H, W)`` → ``(B, 2048)``: globally averaged last conv map."""
        return torch.flatten(self.avgpool(self.feature_map(x)), 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, 3, H, W)`` → ImageNet logits ``(B, num_classes)``."""
        return self.fc(self.pooled(x))


def resnet152(num_classes: int = 1000) -> ResNet:
    """A randomly initialised ResNet-152 (load weights with ``load_state_dict``)."""
    return ResNet(RESNET152_LAYERS, num_classes=num_classes)
