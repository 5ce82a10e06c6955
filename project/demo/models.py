from django.db import models


class Ticket(models.Model):
    class Priority(models.TextChoices):
        LOW = "low", "Low"
        NORMAL = "normal", "Normal"
        HIGH = "high", "High"

    subject = models.CharField(max_length=120)
    body = models.TextField(help_text="What happened, and what you expected instead.")
    priority = models.CharField(max_length=10, choices=Priority, default=Priority.NORMAL)
    due = models.DateField(null=True, blank=True, help_text="Leave empty when there is no deadline.")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return self.subject
