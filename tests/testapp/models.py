import uuid

from django.db import models


class Colour(models.Model):
    name = models.CharField(max_length=30, unique=True)
    code = models.CharField(max_length=7, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Gadget(models.Model):
    """A model touching many field kinds, for fields_for_model."""

    name = models.CharField(max_length=40, unique=True, help_text="Unique among gadgets.")
    slug = models.SlugField()
    price = models.DecimalField(max_digits=6, decimal_places=2, default=1)
    stock = models.PositiveIntegerField(default=0)
    active = models.BooleanField(default=True)
    released = models.DateField(null=True, blank=True)
    colour = models.ForeignKey(Colour, on_delete=models.PROTECT, null=True, blank=True)
    tags = models.ManyToManyField(Colour, related_name="tagged", blank=True)
    token = models.UUIDField(default=uuid.uuid4)
    manual = models.FileField(upload_to="manuals/", blank=True)
    notes = models.TextField(blank=True, max_length=500)
