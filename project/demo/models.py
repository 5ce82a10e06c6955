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


class Refund(models.Model):
    """A refund someone asked for through the ``refund_request`` tool, recorded once finance approved it."""

    order = models.CharField("order reference", max_length=40)
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    reason = models.TextField()
    requested_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="refunds"
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]
        # Who may approve a refund request in the admin (the tool's ``approval``); seed_demo gives it to
        # the finance user.
        permissions = [("approve_refund", "Can approve refund requests")]

    def __str__(self) -> str:
        return f"{self.amount} for {self.order}"


class TravelRequest(models.Model):
    """A trip someone asked for through the ``travel_request`` tool, step by step, and confirmed."""

    destination = models.CharField(max_length=100)
    international = models.BooleanField(default=False)
    passport_number = models.CharField(max_length=20, blank=True, help_text="Only for an international trip.")
    passport_expiry = models.DateField(null=True, blank=True)
    departure = models.DateField()
    return_date = models.DateField()
    budget = models.DecimalField(max_digits=10, decimal_places=2)
    requested_by = models.ForeignKey(
        "auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="travel_requests"
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.destination}, {self.departure} to {self.return_date}"
